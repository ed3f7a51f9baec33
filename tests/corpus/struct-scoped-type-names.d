/* A struct may be named in its scope: D`name for the script's own, vmlinux`name for the kernel's. */
struct pair {
	int a;
	int b;
};

BEGIN
{
	printf("%d %d %d\n", offsetof(struct D`pair, b), sizeof (struct D`pair),
	    ((struct vmlinux`task_struct *)curthread)->pid == pid);
	exit(0);
}
