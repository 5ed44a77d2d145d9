from graphscope.cli import console

console()
