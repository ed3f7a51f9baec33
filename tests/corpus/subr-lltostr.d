BEGIN
{
	x = -42;
	printf("%s %s %s %s %s\n", lltostr(0), lltostr(7), lltostr(x), lltostr(1234567890123), lltostr(9223372036854775807));
	exit(0);
}
