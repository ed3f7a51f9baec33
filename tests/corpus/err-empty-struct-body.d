struct s {
};

BEGIN
{
	exit(0);
}
