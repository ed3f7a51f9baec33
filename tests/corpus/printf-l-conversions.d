BEGIN
{
	printf("%lu %llx %llX %lo\n", (unsigned long)12345, (long long)0xdeadbeefcafe, (long long)0xdeadbeefcafe, (unsigned long)8);
	exit(0);
}
