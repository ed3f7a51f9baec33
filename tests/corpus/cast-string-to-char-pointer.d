/*
 * A string casts to a pointer as the address of the char array that holds
 * it, as Solaris scripts cast psinfo_t's char[80] pr_psargs
 * (`(char *)curpsinfo->pr_psargs`); to an integer it may not.
 */
BEGIN
{
	this->p = (char *)curpsinfo->pr_fname;
	printf("%s %c %s\n", stringof(this->p), *(char *)"xyz", stringof((void *)execname));
	exit(0);
}
