BEGIN { printf(1); }
