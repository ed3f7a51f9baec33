int x[5];
BEGIN { x[1, 2] = 1; }
