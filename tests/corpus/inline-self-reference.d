inline int a = a + 1;
