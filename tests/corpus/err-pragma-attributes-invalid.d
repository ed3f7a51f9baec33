#pragma D attributes Sturdy/Stable/Common x

BEGIN
{
	exit(0);
}
