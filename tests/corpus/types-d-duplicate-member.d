struct foo {
	int x;
	char x;
};
