struct big {
	char bytes[9000];
};

BEGIN
{
	print(*(struct big *)curthread);
}
