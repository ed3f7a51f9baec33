BEGIN
{
	this->p = alloca(arg0);
}
