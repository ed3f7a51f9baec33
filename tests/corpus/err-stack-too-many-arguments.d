BEGIN { stack(1, 2); }
