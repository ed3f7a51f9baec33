inline int rand = 7;

BEGIN
{
	exit(0);
}
