BEGIN
{
	i = 1;
	x = i == 0 ? trace(0) : trace(1);
}
