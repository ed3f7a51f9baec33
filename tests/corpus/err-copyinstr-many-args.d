BEGIN { trace(copyinstr(0, 1, 2)); }
