BEGIN
{
	go = 1;
}

BEGIN
/go/
{
	printf("yes\n");
	go = 0;
}

BEGIN
/!go/
{
	printf("no\n");
	exit(0);
}
