struct s {
	int f();
};
