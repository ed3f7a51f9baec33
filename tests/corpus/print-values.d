/* print(): each value with its type, integers in hex, as DTrace prints. */
struct name16 {
	char text[16];
};

BEGIN
{
	print(5);
	print("abc");
	print((char)65);
	print((uint64_t)0);
	print(curthread->comm);
	print(*(struct name16 *)&curthread->comm);
	exit(0);
}
