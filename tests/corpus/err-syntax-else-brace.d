BEGIN
{
	if (1) {
		x = 1;
	} else
}