BEGIN
{
	this->c = *curthread->cred;
	this->c = *curthread;
}
