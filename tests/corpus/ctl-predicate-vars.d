BEGIN
{
	x = 3;
	s = "on";
}

BEGIN
/x > 2 && s == "on"/
{
	printf("first\n");
}

BEGIN
/x > 5 || s == "off"/
{
	printf("second\n");
}

BEGIN
/!(x > 5)/
{
	printf("third\n");
	exit(0);
}
