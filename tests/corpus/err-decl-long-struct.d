long struct s {
	int i;
};
