/* p + n moves by n elements of p's type (void * takes no arithmetic:
   types-void-pointer-arithmetic.d). */
BEGIN
{
	printf("%d %d %d %d\n", (uintptr_t)((int *)0 + 3), (uintptr_t)((long *)8 - 1),
	    (uintptr_t)((char *)0 + 3), (uintptr_t)((char **)0 + 2));
	printf("%d\n", (uintptr_t)((struct task_struct *)0 + 1) == sizeof (struct task_struct));
	printf("%d\n", ((int *)40 - (int *)0));
	exit(0);
}
