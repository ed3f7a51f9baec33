#pragma D option errtags
/* return()'s prototype is void(int). */
BEGIN
{
	return("");
}
