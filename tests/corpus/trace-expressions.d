BEGIN
{
	x = 6;
	trace(1 + 2 * 3);
	trace(",");
	trace(x * x - 1);
	trace(",");
	trace(x > 5);
	trace(",");
	trace(strjoin("a", "b"));
	trace(",");
	trace(strlen("four"));
	trace("\n");
	exit(0);
}
