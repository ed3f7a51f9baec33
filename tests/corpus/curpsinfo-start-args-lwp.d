/*
 * psinfo_t's start time, argument and environment vectors, children's CPU
 * time and representative thread, and lwpsinfo_t's times, as Solaris'
 * proc(4) defines them. BEGIN runs in the dtrace process, started just now.
 */
BEGIN
{
	this->now = walltimestamp / 1000000000;
	printf("%d %d %d\n", curpsinfo->pr_start.tv_sec <= this->now,
	    curpsinfo->pr_start.tv_sec > this->now - 60,
	    curpsinfo->pr_start.tv_nsec < 1000000000);
	printf("%d %d\n", curpsinfo->pr_argc >= 3,
	    strstr(copyinstr(*(uintptr_t *)copyin(curpsinfo->pr_argv, 8)), "dtrace") != NULL);
	printf("%d\n", curpsinfo->pr_envp ==
	    curpsinfo->pr_argv + (curpsinfo->pr_argc + 1) * sizeof (uintptr_t));
	printf("%d %d\n", curpsinfo->pr_ctime.tv_sec >= 0, curpsinfo->pr_ctime.tv_nsec < 1000000000);
	printf("%d %d %s\n", curpsinfo->pr_lwp.pr_lwpid == tid,
	    curpsinfo->pr_lwp.pr_sname == 'O', curpsinfo->pr_lwp.pr_name);
	printf("%d %d\n", curlwpsinfo->pr_start.tv_sec >= curpsinfo->pr_start.tv_sec,
	    curlwpsinfo->pr_time.tv_nsec < 1000000000);
	exit(0);
}
