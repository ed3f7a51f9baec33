proc:::create
{
	trace(args[1]);
}
