struct a {
	int v;
	struct a inner;
};
