self this int x;

BEGIN
{
}
