#pragma D option strsize=4096

BEGIN
{
	trace(strjoin("a", "b"));
	exit(0);
}
