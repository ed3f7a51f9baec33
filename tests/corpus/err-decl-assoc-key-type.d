int counts[string];

BEGIN
{
	counts[1] = 1;
}
