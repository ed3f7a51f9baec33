BEGIN { printa(); }
