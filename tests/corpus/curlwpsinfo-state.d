/* BEGIN fires in the dtrace process, on CPU: SONPROC, shown as O. */
BEGIN
{
	printf("%c %d %d %d %s\n", curlwpsinfo->pr_sname, curlwpsinfo->pr_state == SONPROC,
	    curlwpsinfo->pr_onpro == cpu, curlwpsinfo->pr_bindpro, curlwpsinfo->pr_name);
	exit(0);
}
