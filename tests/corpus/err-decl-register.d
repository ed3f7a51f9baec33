register x;

BEGIN
{
}
