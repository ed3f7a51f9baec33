BEGIN
{
	@a = count();
	printf("hello %d %d", 123, @a);
}
