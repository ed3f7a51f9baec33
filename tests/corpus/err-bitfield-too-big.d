struct s {
	int b : 65;
} v;

BEGIN
{
	exit(0);
}
