from graphscope.cli import main

raise SystemExit(main())
