/* curpsinfo and curlwpsinfo: the D library's translators from task_struct. */
BEGIN
{
	printf("%s %d %d %d %d %d %d\n", curpsinfo->pr_fname, curpsinfo->pr_pid == pid,
	    curpsinfo->pr_ppid == ppid, curpsinfo->pr_uid == uid, curpsinfo->pr_gid == gid,
	    curlwpsinfo->pr_lwpid == tid, curpsinfo->pr_dmodel == PR_MODEL_LP64);
	printf("%d %d\n", curpsinfo->pr_nlwp >= 1, curpsinfo->pr_addr == (uintptr_t)curthread);
	exit(0);
}
