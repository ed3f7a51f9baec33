#pragma D attributes Stable/Stable

BEGIN
{
	exit(0);
}
