enum e {
	toobig = 2147483648
};

BEGIN
{
	exit(0);
}
