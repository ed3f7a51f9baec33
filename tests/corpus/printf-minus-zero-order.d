BEGIN
{
	/* DTrace's flag parser: '0' after '-' clears left-justify, '-' after '0' clears zero-pad */
	printf("[%-05d][%0-5d]\n", 42, 42);
	exit(0);
}
