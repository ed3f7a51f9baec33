int a(void v);
