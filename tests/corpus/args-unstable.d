proc:::create, proc:::exit
{
	trace(args[0]);
}
