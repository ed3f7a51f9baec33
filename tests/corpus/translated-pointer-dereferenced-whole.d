/* *curpsinfo is the psinfo_t translated whole: printed, copied, or read member by member. */
BEGIN
{
	this->p = *curpsinfo;
	printf("%d %d %s\n", this->p.pr_pid == pid, (*curpsinfo).pr_ppid == ppid, this->p.pr_fname);
	exit(0);
}
