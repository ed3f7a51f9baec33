BEGIN
{
	trace(curthread->pid[0]);
}
