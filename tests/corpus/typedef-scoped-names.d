typedef vmlinux`__be32 ipaddr_t;
typedef int foo_t;

BEGIN
{
	printf("%d %d %d\n", sizeof (ipaddr_t), sizeof (vmlinux`u16), sizeof (D`foo_t));
	exit(0);
}
