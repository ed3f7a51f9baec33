struct s {
	int a[4];
};

this struct s t;

/* Arrays in D variables are indexed by any value. */
BEGIN
{
	i = 2;
	this->t.a[i] = 5;
	this->t.a[i - 1] = 4;
	printf("%d %d\n", this->t.a[2], this->t.a[1]);
	exit(0);
}
