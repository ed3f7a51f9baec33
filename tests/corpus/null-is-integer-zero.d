/* NULL is the integer 0, which every pointer takes: sizeof (NULL) is 4, as in DTrace (sizeof/tst.SizeofNULL). */
BEGIN
{
	this->p = (char *)NULL;
	printf("%d %d %d\n", sizeof (NULL), this->p == NULL, curthread != NULL);
	exit(0);
}
