BEGIN
{
	trace(xlate <struct psinfo *> (pid)->pr_pid);
}
