"""Entry point of the PyInstaller build: the same as the `graphscope` command."""

from graphscope.cli import console

if __name__ == "__main__":
    console()
