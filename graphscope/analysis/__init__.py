"""Pure functions over event tables: tables in, arrays and dataclasses out; nothing is drawn here."""
