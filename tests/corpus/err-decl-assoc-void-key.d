int x[void, char];
