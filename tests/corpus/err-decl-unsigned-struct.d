unsigned struct s {
	int i;
};
